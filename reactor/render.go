package reactor

import (
	"context"
	"time"

	"github.com/prose-store/prose/receipt"
)

// Input is one edge a render reads: the producer, the facet, the token it
// consumed and where the producer's world-model is copied.
type Input struct {
	Producer string `json:"producer"`
	Facet    string `json:"facet"`
	Token    string `json:"token"`
	// Dir is the producer's world-model under the inputs directory,
	// relative to it (the escaped producer name).
	Dir string `json:"dir"`
}

// Request is one render.
type Request struct {
	Node *Node
	// Inputs are the node's edges in edge order.
	Inputs []Input
	// InputsDir holds a copy of each producer's world-model (Input.Dir)
	// and inputs.json; a render that edits it fails.
	InputsDir string
	// Out is seeded with the node's current world-model; what it holds
	// when the render returns is published.
	Out string
	// Changed is a file the render may fill with the paths it changed,
	// one a line (relative to Out), for an informed publish.
	Changed string
	// Workspace is the node's private scratch, kept between renders,
	// never published.
	Workspace string
	// Wake is why the node woke.
	Wake receipt.Wake
	// HadState is true when the node had a published world-model.
	HadState bool
	// Now is the reconciler's clock when the render starts.
	Now time.Time
}

// Result is what a render reports about itself.
type Result struct {
	Provider, Model string
	Tokens          receipt.Tokens
}

// Renderer renders one node.
type Renderer interface {
	Render(ctx context.Context, req *Request) (Result, error)
}

// RenderFunc adapts a function to Renderer.
type RenderFunc func(ctx context.Context, req *Request) (Result, error)

// Render implements Renderer.
func (f RenderFunc) Render(ctx context.Context, req *Request) (Result, error) { return f(ctx, req) }
