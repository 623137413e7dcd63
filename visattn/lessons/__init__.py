"""One module per page: the article's data, presets, seeded initialisations and, per lesson section,
a function returning a frozen dataclass with everything the page shows (numbers and measured
sentences' values).

A page reads as its lesson: controls → ``lessons.<page>`` → ``figures`` + translated prose."""
