package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestMain lets a test run cdkbot as a separate process (the test binary re-executed with
// CDKBOT_TEST_AS_CLI set to the JSON of the arguments), so it can be killed like a real one.
func TestMain(m *testing.M) {
	if raw := os.Getenv("CDKBOT_TEST_AS_CLI"); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		os.Exit(Main(context.Background(), args, os.Stdin, os.Stdout, os.Stderr))
	}
	// No test may reach AWS: whatever credentials the machine has are hidden (review's
	// --deployed auto would use them); tests that need AWS start the emulator (moto.Env).
	for _, k := range []string{"AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_ENDPOINT_URL"} {
		os.Unsetenv(k)
	}
	none := filepath.Join(os.TempDir(), "cdkbot-test-no-aws-config")
	os.Setenv("AWS_CONFIG_FILE", none)
	os.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Unsetenv("RUNNER_DEBUG") // a debug re-run of CI would add debug lines to every command's output
	os.Exit(m.Run())
}
