package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// message is one turn as transcripts write it.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// errNotConversation says JSON was read that holds no conversation.
var errNotConversation = errors.New(`not a conversation transcript (want a JSON array of {"role", "content"} objects, an object with "messages", or JSON Lines of them)`)

// parseConversation reads a transcript: a JSON array of messages, an
// object whose "messages" is one (its "title" is kept), or JSON Lines with
// one message per line. Content is a string or a list of parts (strings,
// or objects with a "text").
func parseConversation(src []byte) (title string, msgs []message, err error) {
	trimmed := bytes.TrimSpace(src)
	switch {
	case bytes.HasPrefix(trimmed, []byte("[")):
		err = json.Unmarshal(trimmed, &msgs)
	case bytes.HasPrefix(trimmed, []byte("{")):
		var obj struct {
			Title    string    `json:"title"`
			Messages []message `json:"messages"`
		}
		e := json.Unmarshal(trimmed, &obj)
		if e == nil && obj.Messages != nil {
			title, msgs = obj.Title, obj.Messages
			break
		}
		if json.Valid(trimmed) {
			// One JSON object, however laid out: a single message (JSON
			// Lines of one line), else no transcript — never JSON Lines
			// read line by line.
			var m message
			if json.Unmarshal(trimmed, &m) == nil && m.Role != "" {
				msgs = []message{m}
				break
			}
			return "", nil, errNotConversation
		}
		msgs, err = jsonLines(trimmed)
	default:
		return "", nil, errNotConversation
	}
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return "", nil, fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, err)
		}
		return "", nil, errNotConversation
	}
	if len(msgs) == 0 {
		return "", nil, errNotConversation
	}
	for _, m := range msgs {
		if m.Role == "" {
			return "", nil, errNotConversation
		}
	}
	return title, msgs, nil
}

func jsonLines(src []byte) ([]message, error) {
	var msgs []message
	for i, line := range bytes.Split(src, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// contentText is a message's text: a string, or the text parts of a list.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		var ps string
		if json.Unmarshal(p, &ps) == nil {
			out = append(out, ps)
			continue
		}
		var obj struct {
			Text    *string `json:"text"`
			Content *string `json:"content"`
		}
		if json.Unmarshal(p, &obj) == nil {
			if obj.Text != nil {
				out = append(out, *obj.Text)
			} else if obj.Content != nil {
				out = append(out, *obj.Content)
			}
		}
	}
	return strings.Join(out, "\n\n")
}

// readConversation fills d from a transcript: each question a person asks
// opens a section headed by its first sentence; every turn is a Turn
// block, and the structure of an answer (steps, lists, definitions,
// tables, code) follows it as blocks of their own.
func readConversation(d *Document, src []byte) error {
	title, msgs, err := parseConversation(src)
	if err != nil {
		return err
	}
	d.Title = clean(title)
	for _, m := range msgs {
		role := strings.ToLower(strings.TrimSpace(m.Role))
		text := strings.TrimSpace(contentText(m.Content))
		if text == "" {
			continue
		}
		if role == "user" || role == "human" {
			heading := headingFrom(text)
			if d.Title == "" {
				d.Title = heading
			}
			d.addSection(2, heading)
		}
		d.addBlock(Block{Kind: Turn, Role: role, Text: text})
		if role == "assistant" || role == "model" {
			var sub Document
			readMarkdown(&sub, []byte(text))
			for _, s := range sub.Sections {
				for _, b := range s.Blocks {
					if b.Kind != Paragraph && b.Kind != Quote {
						d.addBlock(b)
					}
				}
			}
			d.Links = append(d.Links, sub.Links...)
		}
	}
	return nil
}

// headingFrom makes a heading of a question: its first sentence, cut to
// about ten words.
func headingFrom(text string) string {
	s := LeadingSentences(text, 1)
	words := strings.Fields(s)
	if len(words) > 10 {
		s = strings.Join(words[:10], " ") + "…"
	}
	return s
}
