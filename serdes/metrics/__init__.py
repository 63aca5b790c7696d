"""serdes.metrics"""
