package publishplan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
)

func load(t *testing.T, rel string) *assembly.Assembly {
	t.Helper()
	a, err := assembly.Load(os.DirFS("../../compat-fixtures/"+rel), rel)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestModernPlan(t *testing.T) {
	t.Parallel()
	p, err := Build(load(t, "aws-cdk-lib@2.276.0/multi-env"), Options{DefaultAccount: "123456789012", DefaultRegion: "us-west-2"})
	if err != nil {
		t.Fatal(err)
	}
	files, images := 0, 0
	for _, j := range p.Jobs {
		switch j.Kind {
		case File:
			files++
		case Image:
			images++
			if j.Image.ResolvedDirectory == "" || j.Image.DockerBuildArgs["GREETING"] != "hello" {
				t.Errorf("image source: %+v", j.Image)
			}
		}
		for _, d := range j.Destinations {
			for _, s := range []string{d.Bucket, d.Key, d.AssumeRoleARN, d.Repository, d.Region} {
				if strings.Contains(s, "${AWS::") {
					t.Errorf("unresolved placeholder in %s: %+v", j.ID, d)
				}
			}
		}
	}
	if files != 6 || images != 1 {
		t.Errorf("%d files and %d images", files, images)
	}
	var agnostic *Destination
	for _, j := range p.Jobs {
		if j.Manifest == "Agnostic.assets" {
			agnostic = &j.Destinations[0]
		}
	}
	if agnostic == nil || agnostic.Bucket != "cdk-hnb659fds-assets-123456789012-us-west-2" || agnostic.AssumeRoleARN != "arn:aws:iam::123456789012:role/cdk-hnb659fds-file-publishing-role-123456789012-us-west-2" {
		t.Errorf("environment-agnostic assets resolve with the credentials' environment: %+v", agnostic)
	}
}

func TestSelection(t *testing.T) {
	t.Parallel()
	a := load(t, "aws-cdk-lib@2.276.0/multi-env")
	p, err := Build(a, Options{IDs: []string{"f2ef35bc06b7"}})
	if err != nil || len(p.Jobs) != 1 || p.Jobs[0].Packaging != "zip" {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := Build(a, Options{IDs: []string{"deadbeef00"}}); err == nil || !strings.Contains(err.Error(), `no asset "deadbeef00"`) {
		t.Errorf("unknown id: %v", err)
	}
}

func TestLegacyPlan(t *testing.T) {
	t.Parallel()
	a := load(t, "aws-cdk-core@1.204.0/multi-env")
	if _, err := Build(a, Options{}); err == nil || !strings.Contains(err.Error(), "BucketName output") {
		t.Fatalf("legacy assets need the toolkit bucket: %v", err)
	}
	p, err := Build(a, Options{ToolkitBucket: "cdktoolkit-stagingbucket-abc"})
	if err != nil {
		t.Fatal(err)
	}
	params := p.Parameters["service-us"]
	found := false
	for k, v := range params {
		if strings.Contains(k, "S3VersionKey") && strings.HasPrefix(v, "assets/f2ef35bc06b7fd226926877c6638c11a1f583b44237f9fe6b58f821e13cbeeb3/||") && strings.HasSuffix(v, ".zip") {
			found = true
		}
	}
	if !found || len(params) < 3 {
		t.Errorf("parameters %v", params)
	}
}

// Every compat fixture plans, forever.
func TestEveryFixturePlans(t *testing.T) {
	t.Parallel()
	manifests, _ := filepath.Glob("../../compat-fixtures/*@*/*/manifest.json")
	for _, m := range manifests {
		rel, _ := filepath.Rel("../../compat-fixtures", filepath.Dir(m))
		p, err := Build(load(t, rel), Options{ToolkitBucket: "cdktoolkit-stagingbucket-abc", DefaultAccount: "123456789012", DefaultRegion: "us-east-1"})
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		for _, j := range p.Jobs {
			if len(j.Destinations) == 0 || (j.Kind == File && j.SourcePath == "" && len(j.Executable) == 0) {
				t.Errorf("%s: incomplete job %+v", rel, j)
			}
		}
	}
}
