"""The text conventions every side shares: words and sentences, questions, filler, repeats, citations.

Standard library only: the hooks import it, and so does the service. Each module is pure
functions over strings.
"""
