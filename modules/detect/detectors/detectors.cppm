// hwaccel.detectors: one detector per backend (detectors/NAME.cppm and
// NAME.cpp) and the parsers of what each vendor's tools and drivers print.
// Internal: `import hwaccel` does not bring it, and it is not installed; the
// library's other modules and the tests, fuzz targets and benchmarks import it.
export module hwaccel.detectors;
export import hwaccel.detect;
#include "detector_partitions.inc"
