"""The bottom of the stack: errors, words, file formats, durable writes and stop signals, which
every layer above uses and which import nothing else of skilltui."""
