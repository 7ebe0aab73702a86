//go:build !unix

package checkout

import "os"

// openFlags: outside Unix there is no named pipe to wait on in a checkout.
const openFlags = os.O_RDONLY
