package resourcespec

import "testing"

func TestEmbeddedSpec(t *testing.T) {
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

func TestParseRejectsBadData(t *testing.T) {
	if _, err := Parse([]byte("not gzip")); err == nil {
		t.Error("accepted non-gzip data")
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(specGz)))
	for b.Loop() {
		if _, err := Parse(specGz); err != nil {
			b.Fatal(err)
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
