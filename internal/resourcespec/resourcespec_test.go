package resourcespec

import "testing"

func TestEmbeddedSpec(t *testing.T) {
	t.Parallel()
	s := Default()
	if s.Len() < 1500 || s.Source != "@aws-cdk/aws-service-spec@0.1.216" {
		t.Fatalf("%d types from %q", s.Len(), s.Source)
	}
	bucket := s.Type("AWS::S3::Bucket")
	for name, want := range map[string]Behaviour{"BucketName": Immutable, "VersioningConfiguration": Mutable, "Nope": Unknown} {
		p, _ := bucket.Property(name)
		if p.Behaviour != want {
			t.Errorf("S3 bucket %s: %s, want %s", name, p.Behaviour, want)
		}
	}
	if !bucket.Stateful || s.Type("AWS::SNS::Topic").Stateful {
		t.Error("statefulness")
	}
	role := s.Type("AWS::IAM::Role")
	if p, _ := role.Property("AssumeRolePolicyDocument"); p.Scrutiny != InlineResourcePolicy {
		t.Errorf("role trust policy scrutiny %q", p.Scrutiny)
	}
	if s.Type("AWS::Lambda::Permission").Scrutiny != LambdaPermission {
		t.Error("lambda permission scrutiny")
	}
	if s.Type("Custom::Thing") != nil {
		t.Error("custom types are unknown")
	}
	var nilType *Type
	if _, ok := nilType.Property("X"); ok {
		t.Error("nil type has no properties")
	}
	if p, _ := s.Type("AWS::EC2::Instance").Property("AvailabilityZone"); p.Behaviour == Unknown {
		t.Error("EC2 AvailabilityZone should be known")
	}
}

func TestEveryEmbeddedTypeParses(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestBadLinesDegradeToUnknown(t *testing.T) {
	t.Parallel()
	s := Parse("X::Y::Z\t-\t-\tA=q\nX::Y::W\tbroken\n")
	if s.Type("X::Y::Z") != nil || s.Type("X::Y::W") != nil {
		t.Error("malformed lines must not yield types")
	}
}

// BenchmarkParse is the start-up cost of the index (types are parsed on lookup).
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(specTSV)))
	for b.Loop() {
		if Parse(specTSV).Len() == 0 {
			b.Fatal("empty")
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	s := Default()
	for b.Loop() {
		p, _ := s.Type("AWS::Lambda::Function").Property("FunctionName")
		if p.Behaviour != Immutable {
			b.Fatal(p)
		}
	}
}
