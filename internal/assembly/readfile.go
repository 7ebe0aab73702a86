package assembly

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
)

// MaxFileSize bounds every file cdkbot reads from an assembly (manifests, templates, metadata):
// CloudFormation itself takes templates of at most 1 MB, so a larger file is a mistake or an
// attack, not an app.
const MaxFileSize = 64 << 20

// readRegular reads a regular file of at most limit bytes (MaxFileSize for what the assembly is
// made of; less for what a reader bounds tighter), refused by its size before it is read. A FIFO,
// a device or a directory in place of a file would hang or mislead the reader: it is refused by
// name.
func readRegular(fsys fs.FS, name string, limit int64) ([]byte, error) {
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): cdkbot reads only files", name, fileKind(info.Mode()))
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, over cdkbot's limit of %d bytes for this file of an assembly",
			name, info.Size(), limit)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized from the stat, as os.ReadFile does: one allocation for the common case.
	buf := bytes.NewBuffer(make([]byte, 0, info.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s grew past cdkbot's limit of %d bytes while it was read", name, limit)
	}
	return data, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}
