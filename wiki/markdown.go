package wiki

import (
	"bytes"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// headingShift moves every heading one level down: the page's title is the
// only h1, so a Markdown "# Part" becomes an h2 of the slot.
type headingShift struct{}

func (headingShift) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering && h.Level < 6 {
			h.Level++
		}
		return ast.WalkContinue, nil
	})
}

// md is built on first use, not when every prose command starts.
var md = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(headingShift{}, 100))),
		// Raw HTML passes through to the slot sanitizer, which keeps what
		// the palette allows and reports the rest.
		goldmark.WithRendererOptions(html.WithUnsafe()),
	)
})

// MarkdownToHTML converts Markdown (GitHub flavour: tables, task lists,
// strikethrough, autolinks) to HTML for a slot. The result still goes
// through the sanitizer when it is written.
func MarkdownToHTML(src string) (string, error) {
	var b bytes.Buffer
	if err := md().Convert([]byte(src), &b); err != nil {
		return "", err
	}
	return b.String(), nil
}
