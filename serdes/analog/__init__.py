"""serdes.analog"""
