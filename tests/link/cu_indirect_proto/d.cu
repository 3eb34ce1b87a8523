typedef double (*dfp_t)(double, double);
__device__ double h2(double x, double y) { double p[16]; for (int i=0;i<16;i++) p[i]=x*i+y; double s=0; for(int i=0;i<16;i++) s+=p[(i*7)&15]*p[i]; return s; }
__device__ dfp_t g_dfp = h2;
