__global__ void ka(float *p, const float *q) { int i = blockIdx.x*blockDim.x+threadIdx.x; float a=q[i],b=q[i+1],c=q[i+2],d=q[i+3]; p[i]=a*b+c*d; p[i+1]=a-d; }
