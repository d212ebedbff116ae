// Symbols libpm2lat.so exports (interposers and injection entry points). Everything else is
// hidden, so the predictor and our helpers never clash with the program's own symbols.
#pragma once

#define PM2LAT_EXPORT __attribute__((visibility("default")))
