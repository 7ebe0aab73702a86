package cfn

import (
	"fmt"
	"strings"
)

// hostileInputs are the inputs that once crashed or exhausted cdkbot, by name.
func hostileInputs() map[string]string {
	bomb := "a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += name + ": &" + name + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n"
		prev = name
	}
	var wide strings.Builder
	wide.WriteString("{")
	for i := 0; i < 50_000; i++ {
		fmt.Fprintf(&wide, `"k%d": {"a": [1, 2, 3]}, `, i)
	}
	return map[string]string{
		"self-alias":   "a: &a [*a]\n",
		"alias-bomb":   bomb,
		"deep-json":    strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000),
		"deep-yaml":    strings.Repeat("- ", 100_000) + "x\n",
		"deep-flow":    "a: " + strings.Repeat("{b: ", 100_000) + "1" + strings.Repeat("}", 100_000) + "\n",
		"wide-objects": wide.String() + `"z": 1}`,
	}
}

// hostileChildEnv names the input a child process parses.
const hostileChildEnv = "CDKBOT_CFN_HOSTILE_CHILD"
