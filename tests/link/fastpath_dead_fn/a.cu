__device__ double scale_d(double x, double y) { return x * y + 0.5; }
__device__ float clampf(float x, float lo) { return x < lo ? lo : x; }
__device__ int bump(int x) { return x + 3; }
__global__ void k_int(int *p, const float *q) { p[0] = bump(p[1]); p[2] = (int)clampf(q[0], q[1]); }
__global__ void k_dbl(double *d) { d[0] = scale_d(d[1], d[2]); }
