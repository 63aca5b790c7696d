"""serdes.channel"""
