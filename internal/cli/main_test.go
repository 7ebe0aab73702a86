package cli

import (
	"context"
	"encoding/json"
	"os"
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
	os.Exit(m.Run())
}
