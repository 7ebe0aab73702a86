package resourcespec

import "testing"

// Every name property is a real property of its type, and one whose change replaces the resource
// (a name is the physical id): a typo or a type the specification renamed fails here.
func TestNamePropertiesAreSpecProperties(t *testing.T) {
	names := NameProperties()
	if len(names) < 30 {
		t.Fatalf("names.tsv lists %d types; want the full table", len(names))
	}
	for typ, prop := range names {
		ty := Default().Type(typ)
		if ty == nil {
			t.Errorf("%s: not a type of %s", typ, Default().Source)
			continue
		}
		p, ok := ty.Property(prop)
		if !ok {
			t.Errorf("%s: %s is not one of its properties", typ, prop)
			continue
		}
		if p.Behaviour != Immutable {
			t.Errorf("%s.%s: behaviour %s, want immutable (a name change replaces)", typ, prop, p.Behaviour)
		}
	}
	if got := NameProperty("AWS::DynamoDB::Table"); got != "TableName" {
		t.Errorf("NameProperty(AWS::DynamoDB::Table) = %q", got)
	}
	if got := NameProperty("Custom::Thing"); got != "" {
		t.Errorf("NameProperty(Custom::Thing) = %q, want none", got)
	}
}
