"""The only Streamlit-aware code. The page frame at the top (page shell, registry, language, URL
state, widgets, what follows a figure, the error path, charts, formulas); ``cache/`` the per-page
cached wrappers; ``lecture/`` the lecture's modes, tour and export; ``room/`` serving a room."""
