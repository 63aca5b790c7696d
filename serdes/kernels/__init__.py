"""serdes.kernels"""
