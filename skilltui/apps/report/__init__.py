"""`skilltui report RUN --to FILE.html`: a run as one self-contained web page, for people who do not use a terminal."""
