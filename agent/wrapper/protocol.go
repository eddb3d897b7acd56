package wrapper

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// Type names a message of the control channel.
type Type string

// What the wrapper sends.
const (
	// TypeState opens every connection: where the worker is now.
	TypeState Type = "state"
	// TypeStarted: an attempt is running, with its PID.
	TypeStarted Type = "started"
	// TypeExited: an attempt ended on its own, with its exit code.
	TypeExited Type = "exited"
	// TypeStopped: a stop is done; nothing of the worker is left.
	TypeStopped Type = "stopped"
	// TypeError: the wrapper refused a message; its state is unchanged.
	TypeError Type = "error"
)

// What the agent sends.
const (
	// TypeStart starts the next attempt.
	TypeStart Type = "start"
	// TypeStop ends the attempt: SIGTERM, then SIGKILL after its grace.
	TypeStop Type = "stop"
	// TypeExit ends the wrapper, and so the container, with its code.
	TypeExit Type = "exit"
)

// State is where the worker is, as a state message reports it.
type State string

const (
	// StateWaiting: no attempt has started yet.
	StateWaiting State = "waiting"
	// StateRunning: the attempt's main process runs.
	StateRunning State = "running"
	// StateStopping: the wrapper is ending what is left of the attempt.
	StateStopping State = "stopping"
	// StateStopped: the agent stopped the attempt and nothing of it is
	// left.
	StateStopped State = "stopped"
	// StateExited: the attempt's main process ended on its own; processes
	// it left behind may still run until the next start, stop or exit.
	StateExited State = "exited"
)

// Message is one line of the control channel, in either direction. Fields
// a type does not use are left out of its line.
type Message struct {
	Type Type `json:"type"`
	// State: in state messages.
	State State `json:"state,omitempty"`
	// Attempt numbers the worker's runs from 1; 0 before the first. A
	// start names the attempt it starts, which must be the wrapper's
	// attempt + 1: a start sent on stale knowledge starts nothing twice.
	Attempt int `json:"attempt,omitempty"`
	// PID of the attempt's main process, while it runs.
	PID int `json:"pid,omitempty"`
	// Code is how an attempt ended (exit status, or 128 + the signal that
	// killed it), and in an exit message the wrapper's own exit code.
	// Absent while no attempt has ended.
	Code *int `json:"code,omitempty"`
	// Grace is how long a stop waits after SIGTERM before SIGKILL.
	Grace Duration `json:"grace,omitempty"`
	// Reason says why the wrapper refused a message.
	Reason string `json:"reason,omitempty"`
}

// Duration is a time.Duration written as Go writes it ("30s", "1.5s"), so
// that a line of the protocol reads as it means.
type Duration time.Duration

// MarshalText writes d as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads what time.ParseDuration accepts, not negative.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %s is negative", text)
	}
	*d = Duration(v)
	return nil
}

// Code returns a pointer to c, for Message.Code.
func Code(c int) *int { return &c }

// maxLine bounds a line of the protocol: a line is one short JSON object,
// and a peer that sends more is not speaking it.
const maxLine = 64 << 10

// encode writes m as one line.
func encode(m Message) ([]byte, error) {
	line, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// decode reads one line.
func decode(line []byte) (Message, error) {
	var m Message
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return Message{}, fmt.Errorf("not a message of the wrapper's protocol: %w", err)
	}
	if m.Type == "" {
		return Message{}, errors.New(`not a message of the wrapper's protocol: no "type"`)
	}
	return m, nil
}

// Conn is the agent's end of the control channel.
type Conn struct {
	conn   net.Conn
	reader *bufio.Reader
}

// Dial connects to the wrapper's control socket once; the caller retries,
// since the wrapper starts with its container and a restarted one takes a
// moment to listen again. The first message received is the wrapper's
// state.
func Dial(ctx context.Context, path string) (*Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	return NewConn(c), nil
}

// NewConn is the agent's end of a control channel reached another way
// than Dial's Unix socket.
func NewConn(c net.Conn) *Conn {
	return &Conn{conn: c, reader: bufio.NewReaderSize(c, maxLine)}
}

// Receive returns the wrapper's next message. It blocks until one comes;
// Close unblocks it. An error ends the connection: the wrapper stopped
// listening to it (it exited, or a newer agent connected), and a new one
// starts with the state.
func (c *Conn) Receive() (Message, error) {
	line, err := c.reader.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return Message{}, fmt.Errorf("reading the wrapper: a line longer than %d bytes", c.reader.Size())
	}
	if err != nil {
		return Message{}, err
	}
	return decode(line)
}

// Send writes one message. A message the wrapper refuses is answered with
// an error message, in order with the others.
func (c *Conn) Send(m Message) error {
	line, err := encode(m)
	if err != nil {
		return err
	}
	_, err = c.conn.Write(line)
	return err
}

// Start asks for attempt to start.
func (c *Conn) Start(attempt int) error {
	return c.Send(Message{Type: TypeStart, Attempt: attempt})
}

// Stop asks for the attempt to end, with SIGKILL grace after SIGTERM.
func (c *Conn) Stop(grace time.Duration) error {
	return c.Send(Message{Type: TypeStop, Grace: Duration(grace)})
}

// Exit asks the wrapper to exit with code.
func (c *Conn) Exit(code int) error {
	return c.Send(Message{Type: TypeExit, Code: Code(code)})
}

// Close ends the connection; the wrapper keeps the worker as it is.
func (c *Conn) Close() error { return c.conn.Close() }
