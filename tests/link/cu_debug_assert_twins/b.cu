#include <cassert>
__global__ void kb(int* p) { assert(p[1] > 0); }
