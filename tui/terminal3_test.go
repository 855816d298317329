package tui

import (
	"fmt"
	"strings"
	"testing"
)

// A copy notice in the login panel does not hide the countdown: both are in the status line
// until the next key.
func TestCopyNoticeKeepsTheCountdown(t *testing.T) {
	_, h, _ := loginAsked(t, 40, 24)
	h.key("c")
	v := strings.Join(strings.Fields(plain(h.view())), " ")
	if !strings.Contains(v, "asked your terminal to copy it") || !strings.Contains(v, "Code expires in") {
		t.Errorf("the copy notice and the countdown are not both shown:\n%s", plain(h.view()))
	}
}

// Messages queued while "Start a new conversation? (y/n)" is open are counted in the status
// line; with text in the input, the help line says that Enter queues it and that y and n
// answer only once the input is empty.
func TestQuestionShowsQueueAndWhatKeysDo(t *testing.T) {
	_, h := questionAsked(t, fmt.Errorf("x: %w", ErrContextClosed), nil, 100, "hi", "(y/n)")
	if !strings.Contains(plain(h.view()), "y new conversation") {
		t.Errorf("help line without the answers:\n%s", plain(h.view()))
	}
	h.typeText("yes please")
	v := plain(h.view())
	if strings.Contains(v, "y new conversation") || !strings.Contains(v, "Enter queue the message") || !strings.Contains(v, "clear the input to answer y/n") {
		t.Errorf("with text in the input the help line still offers y/n:\n%s", v)
	}
	h.key("enter")
	if v := plain(h.view()); !strings.Contains(v, "(y/n) · 1 queued") {
		t.Errorf("the queued message is not shown:\n%s", v)
	}
}
