// The COSE module (COSE_Key, COSE_Sign1, COSE_Mac0). Placeholder line keeping the target non-empty; replaced by the real sources.
