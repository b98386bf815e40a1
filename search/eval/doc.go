// Package eval measures the search engine's rankings against judged
// questions, apart from the serving path: BEIR queries and judgements,
// nDCG, recall and reciprocal rank, the split of a dev signal into a
// tuned half and a held-out one, summaries with standard errors and
// paired differences, the features a second stage would be trained on,
// and the author collections that recommendations are measured by. It
// reaches the engine only through its exported methods (Search,
// Retrieve, Store, Models, RecommendAmong, WithFusion); `papersearch eval`
// drives it.
package eval
