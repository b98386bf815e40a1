// Package atlas makes a map of a corpus from its vectors: each paper a
// point in the unit square near the papers nearest it in meaning (exact
// nearest neighbours, then a UMAP-style neighbour embedding started from
// the principal components), clusters at several levels nested in each
// other (spherical k-means merged by Ward's criterion), each named by its
// most distinctive terms (class-based TF-IDF), and the measures that say
// how good a map is: trustworthiness and continuity of its
// neighbourhoods, and the adjusted mutual information of its clusters
// with other labels. It holds no state: the engine keeps the map it
// serves.
package atlas
