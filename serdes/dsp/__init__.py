"""serdes.dsp"""
