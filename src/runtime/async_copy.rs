//! Stream-ordered copies and fills: SDMA work ordered after a stream's earlier packets and
//! before its later ones.
