package ciworkflow

import (
	"os"
	"testing"

	"github.com/prose-store/prose/internal/testtmp"
)

// TestMain puts a short run's temporary files on a RAM file system
// (package internal/testtmp says why).
func TestMain(m *testing.M) { os.Exit(testtmp.Main(m)) }
