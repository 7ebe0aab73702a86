package synth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/cdkbot/cdkbot/internal/checkout"
)

// The app's files are pull-request code that cdkbot, often root, reads before the app runs as
// someone else: each is read through package checkout, so that no symbolic link it commits
// (cdk.context.json -> /root/secret.json) hands cdkbot's files to the app, and no device or
// huge file (package-lock.json -> /dev/zero) exhausts cdkbot's memory.

// checkoutTop is the top of the checkout the app's files are read in: Root, else the
// repository Dir is in, else Dir itself.
func (o Options) checkoutTop() string {
	if o.Root != "" {
		return o.Root
	}
	return checkout.Top(o.Dir)
}

// openFile opens name, a file of the app's directory, inside the checkout.
func (o Options) openFile(name string, limit int64) (io.ReadCloser, error) {
	top := o.checkoutTop()
	return checkout.Open(top, checkout.Rel(top, filepath.Join(o.Dir, name)), limit)
}

// readFile reads name, a file of the app's directory, inside the checkout.
func (o Options) readFile(name string, limit int64) ([]byte, error) {
	top := o.checkoutTop()
	return checkout.ReadFile(top, checkout.Rel(top, filepath.Join(o.Dir, name)), limit)
}

// lockKey is the cache key of the dependencies install makes from the lock file ("" without
// one): a digest of the command, the lock file and the lock files of the packages below the app
// (an install script may install them), each streamed, so memory stays small whatever its size.
func (o Options) lockKey(install, lock string) (string, error) {
	if lock == "" {
		return "", nil
	}
	subs, err := o.subLockFiles()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	// v2: an entry holds every node_modules below the app, not only the app's own.
	// v3: each lock file's package.json keys it too: its install scripts (a postinstall that
	// installs lambdas/) decide what the install writes, and change without the lock file.
	io.WriteString(h, "v3\n"+install+"\n")
	for i, name := range append([]string{lock}, subs...) {
		sum, err := o.digest(name)
		switch {
		case errors.Is(err, fs.ErrNotExist) && i == 0:
			return "", nil // a marker that is a dangling link: the install says what is wrong
		case err != nil && i == 0:
			return "", err // it names the file
		case err != nil:
			// A sub-package's lock file cdkbot will not read cannot key the cache: install afresh.
			fmt.Fprintf(o.Log, "cdkbot: dependencies not cached: %v\n", err)
			return "", nil
		}
		fmt.Fprintf(h, "%q %x\n", name, sum)
		manifest := filepath.Join(filepath.Dir(name), "package.json")
		switch sum, err := o.digest(manifest); {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			fmt.Fprintf(o.Log, "cdkbot: dependencies not cached: %v\n", err)
			return "", nil
		default:
			fmt.Fprintf(h, "%q %x\n", manifest, sum)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12]), nil
}

// digest is the SHA-256 of name, a file of the app's directory read inside the checkout.
func (o Options) digest(name string) ([]byte, error) {
	f, err := o.openFile(name, checkout.MaxLockFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// readApp reads cdk.json: the app command, the context to pass, merged as the CLI merges it
// (cdk.context.json, then cdk.json's context), with the CLI's metadata defaults, and the
// validation setting. A cdk.json or cdk.context.json that cdkbot refuses to read fails the
// synthesis, saying why: without it the app would run with other settings than its own.
func (o Options) readApp() (appConfig, error) {
	ctx := map[string]any{
		"aws:cdk:enable-path-metadata": true, "aws:cdk:enable-asset-metadata": true, "aws:cdk:version-reporting": true,
	}
	var cdkJSON struct {
		App        string         `json:"app"`
		Context    map[string]any `json:"context"`
		Validation any            `json:"validation"` // honoured only as a JSON boolean
	}
	raw, err := o.readFile("cdk.json", checkout.MaxSettingsFile)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &cdkJSON); err != nil {
			return appConfig{}, fmt.Errorf("cdk.json: not valid JSON: %w", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return appConfig{}, err
	}
	switch raw, err := o.readFile("cdk.context.json", checkout.MaxSettingsFile); {
	case err == nil:
		var c map[string]any
		if json.Unmarshal(raw, &c) == nil {
			for k, v := range c {
				ctx[k] = v
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return appConfig{}, err
	}
	for k, v := range cdkJSON.Context {
		ctx[k] = v
	}
	for k, v := range o.Context { // the CLI's -c wins over cdk.json and cdk.context.json
		ctx[k] = v
	}
	cmd := o.SynthCommand
	if cmd == "" {
		cmd = cdkJSON.App
	}
	if cmd == "" {
		return appConfig{}, fmt.Errorf("%s: no cdk.json with an \"app\" command; set the synth command", o.Dir)
	}
	a := appConfig{command: cmd, context: ctx}
	if v, ok := cdkJSON.Validation.(bool); ok {
		a.validation = &v
	}
	return a, nil
}
