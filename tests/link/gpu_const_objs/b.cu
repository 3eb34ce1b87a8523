__constant__ float cb[2] = {0.5f, 2.0f};
