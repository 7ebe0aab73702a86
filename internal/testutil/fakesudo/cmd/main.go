//go:build unix

// Command fakesudo stands in for sudo where sudo is not installed, for tests only: installed
// setuid root, it runs `fakesudo -n [-u USER|#UID] [--] COMMAND [ARG]...` as root or as USER
// (its primary group, no other groups) with a minimal environment, as sudo does for a user with
// passwordless sudo. It is no sudo: it asks nothing and lets anyone do anything.
package main

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	args := os.Args[1:]
	uid, gid := 0, 0
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-n":
			args = args[1:]
		case "-u":
			if len(args) < 2 {
				fail("-u needs a user")
			}
			uid, gid = lookup(args[1])
			args = args[2:]
		case "--":
			args = args[1:]
			goto run
		default:
			fail("unknown option " + args[0])
		}
	}
run:
	if len(args) == 0 {
		fail("no command")
	}
	path := args[0]
	if !strings.Contains(path, "/") {
		path = ""
		for _, d := range []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
			if _, err := os.Stat(filepath.Join(d, args[0])); err == nil {
				path = filepath.Join(d, args[0])
				break
			}
		}
		if path == "" {
			fail(args[0] + ": command not found")
		}
	}
	if err := syscall.Setgroups(nil); err != nil {
		fail(err.Error())
	}
	if err := syscall.Setgid(gid); err != nil {
		fail(err.Error())
	}
	if err := syscall.Setuid(uid); err != nil {
		fail(err.Error())
	}
	fail(syscall.Exec(path, args, []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}).Error())
}

// lookup reads a user as sudo's -u takes it: a name, or #uid of a known user.
func lookup(spec string) (int, int) {
	var u *user.User
	var err error
	if id, ok := strings.CutPrefix(spec, "#"); ok {
		u, err = user.LookupId(id)
	} else {
		u, err = user.Lookup(spec)
	}
	if err != nil {
		fail("unknown user " + spec)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "fakesudo: "+msg)
	os.Exit(1)
}
