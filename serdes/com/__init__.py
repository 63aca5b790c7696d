"""serdes.com: Channel Operating Margin (IEEE 802.3 Annex 93A), see docs/com.md."""
