package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/papersearch/papersearch/catalog/imports"
)

// synopses are each command's usage line and what it does, as -h prints
// them (printUsage lists them all).
var synopses = map[string]string{
	"serve":     "papersearch [serve]\n\nServe the HTTP API and the search page. It takes no arguments; configure it with the\nPAPERSEARCH_* variables that 'papersearch help' lists.",
	"ingest":    "papersearch ingest FILE...\n\nAdd the papers of seed-text or JSONL files (.gz too) to the store through the pipeline import\nuses (batches of 256, versions of one work merged) and print what changed; rejected records\nare listed with their lines. Vectors come from and go to the embedding cache\n(PAPERSEARCH_EMBED_CACHE): a corpus embedded before by the same models costs no encoder time.",
	"import":    "papersearch import SOURCE ARG [flags]\n\nAdd papers from a source, tagged with --tag and the source's own tags. Sources: " + imports.Usage() + ".",
	"search":    "papersearch search [flags] QUERY\n\nPrint the papers that best answer QUERY (from PAPERSEARCH_SERVER when set, else the local store).",
	"similar":   "papersearch similar [flags] ID\n\nPrint the papers most like paper ID, never the paper itself (from PAPERSEARCH_SERVER when set, else the local store).",
	"recommend": "papersearch recommend [flags] TAG\n\nPrint the papers outside collection TAG (the papers holding that tag) that fit it best, each with\nthe member it is nearest to; papers marked not interested for it (tagged not.TAG) are never printed (from PAPERSEARCH_SERVER when\nset, else the local store).",
	"watch":     "papersearch watch add SOURCE TARGET [flags] | list | rm ID | run ID\n\nKeep a source imported by itself: the server runs each watch every period (--every), each run going\non from where the last ended, through the pipeline import uses. Sources: " + strings.Join(imports.WatchSources(), ", ") + "\n(TARGET as import takes it). list shows each watch's next run and how its last went; rm removes one;\nrun runs one now (here, or by the server at PAPERSEARCH_SERVER). Without PAPERSEARCH_SERVER the watches\nare the data folder's, which a server on that folder runs.\nFlags: add takes --every, --tag, --max and --since (papersearch watch add -h); each subcommand takes --json.",
	"mcp":       "papersearch mcp\n\nServe the Model Context Protocol over stdin and stdout, for an AI assistant that starts\nthis command: the tools search, similar, related_for_text, get_paper, list_collections, recommend,\nimport and import_status, every paper as a resource (papersearch://papers/{+id}) and every\ncollection as the list of its papers (papersearch://collections/{tag}), over the local store.\nThe HTTP service answers the same at /mcp.",
	"reindex":   "papersearch reindex\n\nRe-embed the whole index under the configured model. It takes no arguments.",
	"eval":      "papersearch eval --corpus C (--queries Q --qrels R | --titles) [flags]\n\nBuild a fresh index of a BEIR corpus and report nDCG@10, first, top 10, MRR@10 and recall@100 per mode and per overlap band\n(the share of a query's content words its relevant paper holds: under 40%, 40-60%, over 60%), each with its paired\ndifference from the default hybrid run (or --baseline) and that difference's standard error. Figures are for the dev\nhalf of the queries; --held-out reports the other half, on which no choice should be made.",
	"bench":     "papersearch bench [flags]\n\nMeasure ingest, latency, throughput, memory and disk end to end: a fresh store, the real\nHTTP server, concurrent clients; and the store's dense top 10 for 100 papers' own vectors\nagainst an exact scan (recall@10). scripts/scale_papers.py writes a corpus of any size from\nthe shared papers for --papers.",
}

// errHelped is returned by a command that printed its usage because -h or
// --help asked for it: run ends with success.
var errHelped = errors.New("usage printed")

// wantsHelp reports whether args ask for a command's usage.
func wantsHelp(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" })
}

// printHelp prints a command's synopsis and, if fs is not nil, its flags.
func printHelp(w io.Writer, cmd string, fs *flag.FlagSet) error {
	fmt.Fprintf(w, "Usage: %s\n", synopses[cmd])
	if fs != nil {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	return errHelped
}

// parseFlags parses a command's flags; -h or --help prints its usage to
// stdout instead and returns errHelped, any other mistake a usageError.
func parseFlags(fs *flag.FlagSet, cmd string, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return printHelp(stdout, cmd, fs)
		}
		return usageError{fmt.Sprintf("%s: %v; see papersearch %s -h", cmd, err, cmd)}
	}
	return nil
}
