__device__ float h1(float x) { double *p = (double*)malloc(64); for (int i=0;i<8;i++) p[i]=x*i; float s=0; for(int i=0;i<8;i++) s+=sin(p[i]); free(p); return s; }
__device__ float h3(float x) { return tan((double)x) * 3.5; }
