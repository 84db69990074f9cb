// Package sweep scores grids of MinHash LSH configurations against labeled pairs:
// recall, false merges and removals per configuration, with intervals, dataset-level
// estimates from the sampling design, the Pareto front and a recommendation.
package sweep
