package wiki

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	// Raw HTML passes through to the slot sanitizer, which keeps what the
	// palette allows and reports the rest.
	goldmark.WithRendererOptions(html.WithUnsafe()),
)

// MarkdownToHTML converts Markdown (GitHub flavour: tables, task lists,
// strikethrough, autolinks) to HTML for a slot. The result still goes
// through the sanitizer when it is written.
func MarkdownToHTML(src string) (string, error) {
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b); err != nil {
		return "", err
	}
	return b.String(), nil
}
