"""The only Streamlit-aware helpers: language, URL state, page frame, cached compute, shared
widgets."""
