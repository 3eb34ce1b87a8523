#include <cassert>
__global__ void ka(int* p) { assert(p[0] > 0); }
