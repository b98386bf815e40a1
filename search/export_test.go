package search

// ResearchOptions are the engine's research knobs (see research), which
// only tests set: the dev signals that compare them with the defaults.
type ResearchOptions research

// WithResearch returns opts with the research knobs r.
func WithResearch(opts Options, r ResearchOptions) Options {
	opts.research = research(r)
	return opts
}
