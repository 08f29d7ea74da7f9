"""What a person looks at: a campaign's report.html and report.md, a page per attempt, `apg view`."""
