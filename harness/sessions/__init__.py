"""Long generated sessions: a seeded run of user actions, the plain model of what each user must see and be answered,
and the shrinking of a failing run to a short reproduction. Nothing here touches an app: the steps act the plan out."""
