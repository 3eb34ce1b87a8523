#include <cassert>
__global__ void kc(int* p) { assert(p[2] > 0); }
