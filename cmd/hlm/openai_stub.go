package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/hlmproject/hlm/edge"
)

// serveOpenAI is replaced when the openai package lands.
func serveOpenAI(ctx context.Context, g *edge.Generator, addr, key string, log *slog.Logger, stderr io.Writer) error {
	return errors.New("--openai: not built yet")
}
