"""serdes.engines"""
