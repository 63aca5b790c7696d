"""serdes.signal"""
