// Package seeds holds the corpus the service ships with (NeurIPS2026) and
// the readers of corpus files: the seed text format and JSONL paper
// records. Each other source has a package of its own below it (bibtex,
// csl, arxiv, openreview, openalex; latex decodes their fields and fetch
// reads the network ones). A reader yields papers one at a time with a
// LineError for each record it could not make a paper of; the catalog
// imports what it reads (catalog.Source).
package seeds
