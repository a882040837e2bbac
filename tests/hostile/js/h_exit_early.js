// Hostile: exits 0 as soon as it is loaded, before any test runs.
process.exit(0);
