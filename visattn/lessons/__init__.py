"""One module per page, named by the page's id, and nothing else: the article's data, presets,
seeded initialisations and, per lesson section, a function returning a frozen dataclass with
everything the page shows (numbers and measured sentences' values). A lesson imports no other
lesson: what two share lives in a compute module.

A page reads as its lesson: controls → ``lessons.<id>`` → ``figures`` + translated prose."""
