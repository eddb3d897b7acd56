// Package syncbuffer is a bytes.Buffer that a process writes while a test
// reads it: a child's stdout or stderr, watched with Eventually.
package syncbuffer

import (
	"bytes"
	"sync"
)

// Buffer is safe for one writer and any number of readers at once.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
